#include "apps/lineage_app.hpp"

int main(int argc, char** argv) {
  return ctxkit::program_main("ctx-lineage", argc, argv, ctxkit::run_lineage);
}
