#include "apps/session_hook_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-session-hook", argc, argv, 1, ctxkit::run_session_hook);
}
