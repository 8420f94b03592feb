#include "apps/trim_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-trim", argc, argv, ctxkit::apps::run_trim);
}
