#include "apps/search_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-search", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_search);
}
