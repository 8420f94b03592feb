#include "apps/session_hook_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-session-hook", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_session_hook);
}
