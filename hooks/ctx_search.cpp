#include "apps/search_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-search", argc, argv, ctxkit::apps::run_search);
}
