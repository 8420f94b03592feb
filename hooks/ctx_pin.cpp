#include "apps/pins_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-pin", argc, argv, ctxkit::apps::run_pin);
}
