#include "apps/rollover_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-rollover", argc, argv, 1, ctxkit::run_rollover);
}
