// loam-tool: the engine's command-line workbench (determinism digests, world
// generation and hashes, previews, save inspection, offline audio renders and spectrograms).
#include <CLI/CLI.hpp>

#include "tool/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"loam-tool: determinism digests, world generation, previews and saves"};
  app.require_subcommand(1);
  int exitCode = 0;
  loam::tool::addDetmathDigestCommand(app, exitCode);
  loam::tool::addGenCommand(app, exitCode);
  loam::tool::addPreviewCommand(app, exitCode);
  loam::tool::addSimCommand(app, exitCode);
#ifdef LOAM_WITH_SAVES
  loam::tool::addSaveInfoCommand(app, exitCode);
  loam::tool::addExportSaveCommand(app, exitCode);
  loam::tool::addImportSaveCommand(app, exitCode);
#endif
#ifdef LOAM_WITH_ADMIN
  loam::tool::addAdminCommand(app, exitCode);
#endif
#ifdef LOAM_WITH_AUDIO
  loam::tool::addAudioSampleCommand(app, exitCode);
  loam::tool::addRenderAudioCommand(app, exitCode);
  loam::tool::addSpectrogramCommand(app, exitCode);
  loam::tool::addAcousticsDebugCommand(app, exitCode);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exitCode;
}
