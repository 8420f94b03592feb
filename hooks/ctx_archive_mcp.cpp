#include "apps/archive_mcp_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-archive-mcp", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_archive_mcp);
}
