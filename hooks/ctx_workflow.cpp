#include "apps/workflow_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-workflow", argc, argv, ctxkit::apps::run_workflow);
}
