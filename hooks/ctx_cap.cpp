#include "apps/cap_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-cap", argc, argv, ctxkit::apps::run_cap);
}
