#include "apps/status_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-status", argc, argv, 1, ctxkit::run_status);
}
