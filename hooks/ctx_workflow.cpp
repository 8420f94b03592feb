#include "apps/workflow_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-workflow", argc, argv, ctxkit::run_workflow);
}
