#include "apps/workflow_app.hpp"

int main(int argc, char** argv) { return ctxkit::guarded_main("ctx-workflow", argc, argv, 1, ctxkit::run_workflow); }
