#include "apps/gate_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-gate", argc, argv, ctxkit::run_gate);
}
