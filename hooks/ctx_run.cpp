#include "apps/run_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-run", argc, argv, ctxkit::apps::run_runner);
}
