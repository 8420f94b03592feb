#include "apps/workflow_mcp_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-workflow-mcp", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_workflow_mcp);
}
