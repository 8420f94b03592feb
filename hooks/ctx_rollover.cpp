#include "apps/rollover_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-rollover", argc, argv, ctxkit::run_rollover);
}
