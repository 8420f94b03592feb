#include "apps/workflow_mcp_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::apps::program_main("ctx-workflow-mcp", argc, argv, ctxkit::apps::run_workflow_mcp);
}
