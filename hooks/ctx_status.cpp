#include "apps/status_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-status", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_status);
}
