#include "apps/status_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-status", argc, argv, ctxkit::run_status);
}
