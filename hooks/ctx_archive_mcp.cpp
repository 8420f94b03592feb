#include "apps/archive_mcp_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-archive-mcp", argc, argv, ctxkit::run_archive_mcp);
}
