#include "apps/session_hook_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-session-hook", argc, argv, ctxkit::apps::run_session_hook);
}
