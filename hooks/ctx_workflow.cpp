#include "apps/workflow_app.hpp"

int main(int argc, char** argv) { return ctxkit::guarded_main("ctx-workflow", argc, argv, ctxkit::ExitCode::failure, ctxkit::run_workflow); }
