#include "apps/search_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-search", argc, argv, ctxkit::run_search);
}
