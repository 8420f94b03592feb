#include "apps/gate_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-gate", argc, argv, ctxkit::apps::run_gate);
}
