#include "apps/status_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-status", argc, argv, ctxkit::apps::run_status);
}
