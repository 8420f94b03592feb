#include "apps/lineage_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::guarded_main("ctx-lineage", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_lineage);
}
