#include "apps/workflow_mcp_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-workflow-mcp", argc, argv, ctxkit::run_workflow_mcp);
}
