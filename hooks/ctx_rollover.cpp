#include "apps/rollover_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-rollover", argc, argv, ctxkit::apps::run_rollover);
}
