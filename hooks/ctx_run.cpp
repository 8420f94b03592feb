#include "apps/run_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-run", argc, argv, ctxkit::run_runner);
}
