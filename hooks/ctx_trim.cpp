#include "apps/trim_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-trim", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_trim);
}
