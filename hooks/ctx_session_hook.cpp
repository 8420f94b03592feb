#include "apps/session_hook_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-session-hook", argc, argv, ctxkit::run_session_hook);
}
