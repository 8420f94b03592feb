#include "apps/rollover_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-rollover", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_rollover);
}
