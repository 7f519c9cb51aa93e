// loam-tool's subcommands. Each lives in its own file and registers itself on the
// CLI11 app; main() only dispatches. A command's run function returns the process
// exit code (0 ok, 1 failure, 2 bad usage or input).
#pragma once

namespace CLI {
class App;
}

namespace loam::tool {

/// `loam-tool detmath-digest [--per-function] [--inputs N]`
void addDetmathDigestCommand(CLI::App& app, int& exitCode);

/// `loam-tool gen --scene S [--seed N] [--threads N] [--hash] [--cells] [--quiet]`:
/// generates the world; --hash prints its world hash as stdout's last line. Timing,
/// memory and progress go to stderr. Exit 2 for a bad scene file.
void addGenCommand(CLI::App& app, int& exitCode);

/// `loam-tool preview --scene S [--seed N] --out map.png [--metres-per-pixel M] [--grid]`:
/// writes a shaded top-down map PNG. Exit 2 for a bad scene file.
void addPreviewCommand(CLI::App& app, int& exitCode);

/// `loam-tool save-info FILE`: prints a save's header, brick count, blob sizes and
/// compressed/raw sizes. Exit 1 if unreadable, 2 if not a valid save. Only in full
/// builds (LOAM_WITH_SAVES; saves need zstd, which the core-only build lacks).
void addSaveInfoCommand(CLI::App& app, int& exitCode);

/// `loam-tool export-save --db F.loamdb --out X.loamsave`: writes a world database's
/// bricks, blobs and tick to a single-file save (a backup). Exit 2 if the database
/// cannot be opened or read or has damaged rows (nothing written), 1 if the save
/// cannot be written. Only in full builds (LOAM_WITH_SAVES).
void addExportSaveCommand(CLI::App& app, int& exitCode);

/// `loam-tool import-save --save X.loamsave --db F.loamdb`: creates a world database
/// holding a save (a restore; F must not exist). Exit 2 if the save is not valid, 1 if
/// it cannot be read or the database cannot be created. Only in full builds.
void addImportSaveCommand(CLI::App& app, int& exitCode);

/// `loam-tool sim --scene S [--seed N] [--script F] [--steps K] [--hash] [--stats]`:
/// builds the world, runs K steps with the script's commands, and with --hash prints
/// the trace hash (world plus state after every step, folded) as stdout's last line.
/// --stats prints stream totals and the mean step time to stderr. Exit 2 for a bad
/// scene or script file, 1 if the world cannot be built.
void addSimCommand(CLI::App& app, int& exitCode);

/// `loam-tool render-audio --scene S [--seed N] [--script F] [--listener x,y,z,yaw]
/// [--seconds T] --out out.wav [--hash] [--quiet]`: renders what a listener hears
/// (audio/offline_render.h) to a float WAV; --hash prints the render hash as stdout's
/// last line; progress and a summary go to stderr. Exit 2 for bad scene, script or
/// listener, 1 if the world cannot be built or the WAV cannot be written. Only in full
/// builds (LOAM_WITH_AUDIO).
void addRenderAudioCommand(CLI::App& app, int& exitCode);

/// `loam-tool audio-sample --model NAME [--seconds T] [--key K] --out out.wav | --list`:
/// renders one synthesis model dry (no engine, no distance) with its default
/// parameters to a mono float WAV. Exit 2 for an unknown model. Only in full builds.
void addAudioSampleCommand(CLI::App& app, int& exitCode);

/// `loam-tool spectrogram in.wav out.png [--fft 2048] [--hop 512] [--linear]`: draws a
/// spectrogram PNG (log frequency axis by default). Exit 2 for an unreadable WAV, 1 if
/// the PNG cannot be written. Only in full builds (LOAM_WITH_AUDIO).
void addSpectrogramCommand(CLI::App& app, int& exitCode);

/// `loam-tool acoustics-debug --scene S [--seed N] --listener x,y,z[,yaw] --out rays.png
/// [--size PX] [--radius M] [--rays N] [--update U] [--cut M] [--quiet]`: one RoomProbe
/// update and the early reflections at the listener, drawn from above (ground, rays,
/// openings, reflection points, listener) to a PNG; the room estimate as one JSON line
/// on stdout.
/// Exit 2 for a bad scene or listener (format, or outside the world), 1 if the world
/// cannot be built or the PNG cannot be written. Only in full builds (LOAM_WITH_AUDIO).
void addAcousticsDebugCommand(CLI::App& app, int& exitCode);

/// `loam-tool admin --server HOST:HTTPPORT [--token T] COMMAND...`: sends one admin
/// command to loam-server's POST /admin and prints the reply (token also from
/// LOAM_ADMIN_TOKEN). Exit 0 ok, 1 refused or unreachable, 2 bad usage. Only in full
/// builds (LOAM_WITH_ADMIN; needs cpp-httplib).
void addAdminCommand(CLI::App& app, int& exitCode);

}  // namespace loam::tool
