#include "apps/trim_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-trim", argc, argv, ctxkit::run_trim);
}
