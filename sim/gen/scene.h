// Scene files: the declarative description of a world (bounds, terrain, biomes,
// scatter rules, structures, tunnels, water, spawn points, animal dens, weather, day
// length). world = generate(scene, seed, generator version); see sim/gen/generator.h.
// The schema, with units and defaults for every key, is documented in docs/SCENES.md.
//
// A Scene is plain data. Loading validates everything: a TOML syntax error, an
// unknown key, a value of the wrong type, a value out of range or an unknown material
// gives an Error "file:line:column: what is wrong"; a present-but-bad value is never
// replaced by a default. Distances are metres, angles degrees, times seconds, flow
// rates litres per second. Axes: x east, y up, z south (as sim/world/voxel.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/world/material.h"
#include "sim/gen/noise.h"
#include "sim/core/result.h"
#include "sim/world/voxel.h"

namespace loam::sim {

/// A material named in the scene, resolved against the material table when loaded.
struct MaterialRef {
  std::string name;    ///< as written
  MaterialId id = kAir;  ///< index in the scene's material table
};

/// A point in plan (metres).
struct Vec2 {
  double x = 0.0, z = 0.0;
};

/// A point in space (metres).
struct Vec3 {
  double x = 0.0, y = 0.0, z = 0.0;
};

/// A closed interval [min, max]; written as a number (min = max) or [min, max].
struct Range {
  double min = 0.0, max = 0.0;
};

/// A disc in plan, used for include/exclude regions.
struct Circle {
  Vec2 center;          ///< metres
  double radius = 0.0;  ///< metres, > 0
};

/// [bounds]: the world's box as written, in metres. The world itself is this box
/// rounded outward to whole chunks (6.4 m); see Scene::worldBounds.
struct SceneBounds {
  Vec3 min;  ///< metres
  Vec3 max;  ///< metres
};

/// [[terrain.layer]]: one noise layer added to the base height.
struct NoiseLayer {
  double wavelength = 32.0;  ///< metres per lattice cell of the first octave
  double amplitude = 1.0;    ///< metres (peak contribution)
  Octaves octaves;           ///< count 1..12, lacunarity, gain
  bool ridged = false;       ///< ridged sum ([0, 1] * amplitude) instead of fBm ([-1, 1] * amplitude)
  Vec2 offset;               ///< metres added to the sample position
  bool erode = true;         ///< landscape layers: shaped by erosion (false: added after it)
};

/// [[terrain.plateau]]: a flat-topped raise (or cut) of the terrain to `height`.
struct Plateau {
  Vec2 center;
  double radius = 10.0;   ///< metres of flat top
  double height = 0.0;    ///< absolute height of the top, metres
  double falloff = 4.0;   ///< metres over which the plateau blends into the terrain (small = cliff)
};

/// [[terrain.basin]]: a smooth bowl subtracted from the terrain.
struct Basin {
  Vec2 center;
  double radius = 10.0;  ///< metres
  double depth = 1.0;    ///< metres at the centre
};

/// [terrain.beach]: surface below an absolute height uses another material.
struct Beach {
  MaterialRef material;    ///< e.g. sand
  double maxHeight = 0.0;  ///< metres; columns whose ground is at or below use the beach material
};

/// [terrain]: height = base + layers, then basins, then plateaus; then ponds and
/// streams carve their beds. Columns are layered surface / subsurface / deep.
struct Terrain {
  double baseHeight = 0.0;          ///< metres
  std::vector<NoiseLayer> layers;
  std::vector<Basin> basins;
  std::vector<Plateau> plateaus;
  MaterialRef surface;              ///< default "grass"
  double surfaceDepth = 0.1;        ///< metres
  MaterialRef subsurface;           ///< default "soil"
  double subsurfaceDepth = 1.0;     ///< metres
  MaterialRef deep;                 ///< default "stone"
  std::optional<Beach> beach;
};

/// [landscape.rivers]: the drainage network of a landscape. A plan cell draining at
/// least minCatchment becomes a river; its width and depth grow with the square root
/// of the area it drains, from the spring's to at most the maximum.
struct RiverRules {
  double minCatchment = 2.0;   ///< km2 draining through a cell for a river to run there
  Range width{3.0, 40.0};      ///< metres at the surface: at a spring, at most
  Range depth{0.5, 3.0};       ///< metres at the centre line: at a spring, at most
  Range sink{0.4, 1.2};        ///< metres of water surface below the plan height: spring, at most
  double meander = 0.3;        ///< 0..0.45: fraction of a cell a river's path bends by
  double valleySlope = 0.35;   ///< rise per metre of the ground cut down beside the river
  MaterialRef water;           ///< default "water"
  std::optional<MaterialRef> bed;    ///< material of the channel's floor (default: the terrain's)
  std::optional<MaterialRef> shoreMaterial;  ///< surface within shoreWidth of the water
  double shoreWidth = 2.0;     ///< metres
};

/// [[landscape.settlements.site]]: a settlement placed by hand, before those the rules
/// choose; what it leaves unset is drawn as for the others.
struct SettlementSite {
  Vec2 at;                              ///< metres, moved to the nearest plan node
  int buildings = 0;                    ///< how many it tries to place (0: drawn from settlements.buildings)
  std::optional<MaterialRef> wall, roof;
};

/// [landscape.settlements]: villages placed by rules on flat ground near water.
struct SettlementRules {
  std::vector<SettlementSite> sites;
  int count = 0;                   ///< the rules add at most this many to the sites (fewer where the map has no room)
  double spacing = 2000.0;         ///< metres at least between two settlements' centres
  double radius = 70.0;            ///< metres from the centre within which buildings stand
  Range buildings{8.0, 18.0};      ///< buildings per settlement (whole numbers)
  Range height{3.0, 150.0};        ///< metres: ground height at the centre
  double maxSlope = 0.12;          ///< rise per metre of the plan around the centre
  double nearWater = 250.0;        ///< metres: the centre is at most this far from a river
  std::vector<MaterialRef> walls;  ///< wall materials, one per settlement by keyed draw (default planks, brick, cobble)
  std::vector<MaterialRef> roofs;  ///< roof materials (default planks, wood)
};

/// [landscape.roads]: roads joining the settlements (a spanning tree, shortest first),
/// found on the plan's grid at a cost that grows with grade, never through a lake or
/// the sea; their surface keeps to max_grade by cutting and filling, and they ford
/// the rivers they cross.
struct RoadRules {
  double width = 4.0;          ///< metres
  double maxGrade = 0.08;      ///< rise per metre of run
  MaterialRef material;        ///< default "gravel"
};

/// [landscape]: a whole-map plan computed once per (scene, seed, generator version)
/// on a coarse grid: large-scale heights from its own noise layers, an edge falling to
/// the sea floor, stream-power erosion that carves valleys, then the drainage (lakes
/// filling basins to their outlet, rivers running to the sea or off the map) and the
/// distance and moisture fields that biome rules read. terrain.layer noise adds the
/// detail on top. Absent: no plan, the terrain is terrain.layer alone.
struct Landscape {
  double cell = 32.0;              ///< metres per plan cell
  double baseHeight = 40.0;        ///< metres
  std::vector<NoiseLayer> layers;  ///< large-scale shape (sampled per plan cell)
  bool hasSea = false;
  double seaLevel = 0.0;           ///< metres; water below it that reaches the map's edge is sea
  double seaFloor = -30.0;         ///< metres the land falls to at the map's edge
  double coastMargin = 0.0;        ///< metres from the edge over which it falls (0 = no fall)
  int erosionSteps = 0;            ///< stream-power iterations (0 = none)
  double erosion = 1.0;            ///< incision per step: the larger, the deeper valleys cut
  double moistureRange = 300.0;    ///< metres from water at which moisture falls to 0
  double lakeDepth = 3.0;          ///< metres a lake's bed sinks below its plan height away from its shores
  MaterialRef seaFloorMaterial;    ///< surface under lake and sea water (default "sand")
  RiverRules rivers;
  SettlementRules settlements;
  RoadRules roads;
};

/// [[biome]]: a named mask. A point's biome is the first biome (file order) whose
/// every condition holds; points matching none have no biome.
struct Biome {
  std::string name;
  bool useNoise = false;          ///< true when a noise condition is given
  double noiseWavelength = 64.0;  ///< metres
  Octaves noiseOctaves;
  Range noiseRange{-1.0, 1.0};    ///< the mask noise (in [-1, 1]) must lie inside
  Range height{-1e9, 1e9};        ///< ground height must lie inside (metres)
  // Ecotope rules (landscape fields; any may be left out):
  Range slope{0.0, 1e9};          ///< rise per metre of run of the ground
  Range aspect{0.0, 360.0};       ///< degrees the slope faces, 0 = north, clockwise (min > max wraps)
  Range moisture{0.0, 1.0};       ///< 1 at water, falling to 0 at landscape.moisture_range
  Range riverDistance{0.0, 1e9};  ///< metres to the nearest river's edge
  Range coastDistance{0.0, 1e9};  ///< metres to the sea
  Range roadDistance{0.0, 1e9};   ///< metres to the nearest road's centre line (beyond its reach: 1e9)
  Range settlementDistance{0.0, 1e9};  ///< metres to the nearest settlement's centre (beyond its reach: 1e9)
  double edge = 0.0;              ///< metres (or its range's units) by which limits are dithered by noise
  std::vector<Circle> inside;     ///< if non-empty, the point must lie in one of them
  std::vector<Circle> outside;    ///< the point must lie in none of them
  std::optional<MaterialRef> surface;  ///< overrides the terrain surface material
};

/// The shapes a scatter rule places.
enum class ScatterKind : std::uint8_t {
  Tree,   ///< trunk plus leaf clusters at their real height
  Bush,   ///< a few leaf clusters on the ground
  Rock,   ///< a squashed, rough ellipsoid partly sunk into the ground
  Grass,  ///< a patch of grass blades (single-voxel columns) above the ground
};

/// [[scatter]]: features on a jittered grid. Each grid cell (i, k) of `spacing`
/// metres holds at most one feature with stable id (rule index, i, k); whether it
/// exists, where, and its shape come from keyed hashes of (seed, rule, i, k).
struct ScatterRule {
  std::string name;
  ScatterKind kind = ScatterKind::Tree;
  double spacing = 4.0;    ///< metres (grid cell edge)
  double jitter = 0.8;     ///< 0..1: fraction of the cell the position may move
  double density = 1.0;    ///< 0..1: chance a cell holds a feature
  std::vector<std::string> biomes;  ///< names; empty = anywhere
  std::vector<int> biomeIndices;    ///< resolved indices into Scene::biomes
  double maxSlope = 10.0;  ///< rise per metre of run at the feature (1 = 45 degrees)
  Range height{-1e9, 1e9};  ///< ground height in metres
  std::vector<Circle> inside;   ///< if non-empty, only inside one of these
  std::vector<Circle> exclude;  ///< never inside any of these
  bool allowInWater = false;    ///< place where ponds or streams cover the ground
  // Shape (which keys apply depends on kind; see docs/SCENES.md).
  MaterialRef material;        ///< trunk (tree), leaves (bush), rock, grass
  MaterialRef leafMaterial;    ///< tree canopy
  Range trunkHeight{5.0, 8.0};     ///< tree: metres from ground to the canopy centre
  Range trunkRadius{0.2, 0.3};     ///< tree: metres
  Range radius{1.5, 2.5};          ///< tree/bush: leaf cluster radius; rock: radius; grass: patch radius
  Range clusters{3.0, 5.0};        ///< tree/bush: number of leaf clusters (whole numbers)
  double spread = 1.5;             ///< tree/bush: metres clusters may sit from the centre
  double leafFill = 0.85;          ///< tree/bush: fraction of the outer shell voxels that hold leaves
  Range squash{0.5, 0.8};          ///< rock: vertical scale of the ellipsoid
  double sink = 0.3;               ///< rock: fraction of the height below ground
  Range bladeHeight{0.1, 0.3};     ///< grass: metres
  double fill = 0.5;               ///< grass: fraction of columns in the patch with a blade
  // Per item, keyed by its position (every kind):
  Range scale{1.0, 1.0};           ///< a factor on all of an item's sizes
  Range tilt{0.0, 0.0};            ///< tree, rock: degrees it leans from upright, toward its keyed heading
  Range stretch{1.0, 1.0};         ///< rock: its long horizontal axis over the short one, along its heading
};

/// The primitives a structure is built from.
enum class StructureKind : std::uint8_t {
  Box,       ///< a solid box (from, to)
  Wall,      ///< a box (named for readers and tools)
  Floor,     ///< a box
  Roof,      ///< a gable (or flat, pitch 0) roof over the box footprint
  Arch,      ///< an opening through a wall: a box whose top is a half circle
  Doorway,   ///< an opening (box), air unless a material is given
  Window,    ///< a box of glass unless a material is given
  Cylinder,  ///< a vertical cylinder, optionally hollow
};

/// [[structure]]: applied in file order after terrain and scatter (later wins).
struct Structure {
  std::string name;
  StructureKind kind = StructureKind::Box;
  MaterialRef material;   ///< default: air for arch/doorway, glass for window; required otherwise
  Vec3 from, to;          ///< box corners, metres (any order; normalised on load)
  double pitch = 0.5;     ///< roof: rise per metre of run (0 = flat slab)
  bool ridgeAlongX = true;  ///< roof: ridge runs along x ("x") or z ("z")
  double thickness = 0.3;   ///< roof: metres measured vertically
  Vec3 center;             ///< cylinder: centre of the base, metres
  double radius = 1.0;     ///< cylinder: outer radius
  double innerRadius = 0.0;  ///< cylinder: inner radius (0 = solid)
  double height = 1.0;     ///< cylinder: metres
  std::optional<MaterialRef> innerMaterial;  ///< cylinder: written inside inner radius (else untouched)
};

/// Whether a carved passage has a flat floor.
enum class TunnelKind : std::uint8_t {
  Tunnel,  ///< dug: points are the floor centre line; round section cut flat at the floor
  Cave,    ///< natural: points are the centre line; round section with noisy walls
};

/// [[tunnel]]: air carved along a polyline, after scatter and before structures (so
/// structures may line or block a tunnel).
struct Tunnel {
  std::string name;
  TunnelKind kind = TunnelKind::Tunnel;
  std::vector<Vec3> points;  ///< at least 2, metres
  double radius = 1.5;       ///< metres
  double roughness = 0.0;    ///< cave: 0..0.8, fraction of the radius the walls vary by
};

/// Kinds of water source (the simulation keeps them flowing).
enum class WaterSourceKind : std::uint8_t {
  Spring,
  Waterfall,
};

/// [[water_source]]: a point where the simulation adds water. Not voxels at generation.
struct WaterSource {
  std::string name;
  WaterSourceKind kind = WaterSourceKind::Spring;
  Vec3 position;          ///< metres
  double flowRate = 1.0;  ///< litres per second
  double width = 1.0;     ///< metres across the outflow (waterfall lip)
};

/// [[pond]]: a bowl carved into the terrain and filled with water up to `level`.
struct Pond {
  std::string name;
  Vec2 center;
  double radius = 5.0;   ///< metres
  double depth = 1.0;    ///< metres below the level at the centre
  bool hasLevel = false;  ///< level given explicitly
  double level = 0.0;     ///< absolute water surface height, metres
  double levelOffset = -0.2;  ///< when no level: ground height at the centre (before carving) plus this
  MaterialRef water;      ///< default "water"
  std::optional<MaterialRef> shoreMaterial;  ///< surface within shoreWidth of the water's edge
  double shoreWidth = 1.0;  ///< metres
};

/// [[stream]]: a channel carved along a polyline in plan, water up to its surface,
/// which follows the ground (minus `sink`) and never rises downstream.
struct Stream {
  std::string name;
  std::vector<Vec2> points;  ///< at least 2; upstream first
  double width = 1.5;        ///< metres at the surface
  double depth = 0.5;        ///< metres at the centre line
  double sink = 0.3;         ///< water surface below the ground at each point, metres
  MaterialRef water;         ///< default "water"
  std::optional<MaterialRef> shoreMaterial;
  double shoreWidth = 0.6;   ///< metres
};

/// [[spawn]]: where players appear.
struct SpawnPoint {
  std::string name;
  Vec3 position;        ///< metres; y ignored when onGround
  bool onGround = true;  ///< true when written as [x, z]: stand on the generated ground
  double yaw = 0.0;     ///< degrees, 0 = facing north (-z), clockwise
};

/// Species the simulation knows.
enum class Species : std::uint8_t {
  Bird,
  Fox,
  Dog,
};

/// [[den]]: animals that start at (and return to) a place.
struct AnimalDen {
  std::string name;
  Species species = Species::Fox;
  Vec3 position;
  bool onGround = true;
  int count = 1;         ///< animals, 1..64
  double range = 30.0;   ///< metres they roam from the den
};

/// [[ignition]]: a point the simulation sets fire to, `delay` after the world's start
/// (sim/systems/fire.h, ScheduledIgnition).
struct IgnitionPoint {
  std::string name;
  Vec3 position;
  bool onGround = true;
  double delay = 0.0;   ///< seconds after start (tick 0) at which the step lights it
};

/// One scheduled spell of rain.
struct RainSpell {
  double start = 0.0;      ///< seconds after world start
  double duration = 60.0;  ///< seconds
  double intensity = 0.5;  ///< 0..1
};

/// [weather]: defaults until a command changes them.
struct Weather {
  double windDirection = 270.0;  ///< degrees the wind blows from, 0 = north, clockwise
  double windStrength = 2.0;     ///< metres per second
  double gustiness = 0.3;        ///< 0..1
  double rainIntensity = 0.0;    ///< 0..1 at start
  std::vector<RainSpell> rain;   ///< sorted by start on load; must not overlap
};

/// [time]
struct DayCycle {
  double dayLength = 1200.0;  ///< seconds of simulated time per day
  double startHour = 9.0;     ///< 0..24
};

/// A whole scene.
struct Scene {
  std::string name;
  std::string description;
  std::string sourcePath;        ///< file it was loaded from ("" or a label when parsed from text)
  SceneBounds bounds;            ///< as written
  WorldBounds worldBounds;       ///< bounds rounded outward to whole chunks, in bricks
  std::uint64_t defaultSeed = 1;
  std::uint32_t generatorVersion = 1;  ///< the version the scene was written for
  std::string materialsPath;     ///< as written (default "sim/data/materials.toml")
  std::string materialsFile;     ///< resolved path ("" when parsed with a given table)
  std::shared_ptr<const MaterialTable> materials;  ///< the table names were resolved against
  Terrain terrain;
  std::optional<Landscape> landscape;
  std::vector<Biome> biomes;
  std::vector<ScatterRule> scatter;
  std::vector<Structure> structures;
  std::vector<Tunnel> tunnels;
  std::vector<WaterSource> waterSources;
  std::vector<Pond> ponds;
  std::vector<Stream> streams;
  std::vector<SpawnPoint> spawns;
  std::vector<AnimalDen> dens;
  std::vector<IgnitionPoint> ignitions;
  Weather weather;
  DayCycle time;
  std::uint64_t hash = 0;           ///< tomlContentHash of the scene document
  std::uint64_t materialsHash = 0;  ///< tomlContentHash of the material document (0 if none)
};

/// Largest world the loader accepts: metres across in x and z (+-32 km), and in y.
/// Worlds this large are generated by region (generateRegion, ChunkGenerator);
/// generateWorld still refuses more than kMaxGeneratedChunks at once.
inline constexpr double kMaxSceneExtent = 65536.0;
inline constexpr double kMaxSceneHeight = 512.0;
/// Most nodes a landscape plan may have, and nodes x (erosion steps + 1): its memory
/// (about 70 bytes a node) and build time (a priority flood per step) stay bounded.
inline constexpr double kMaxPlanNodes = 1048576.0;
inline constexpr double kMaxPlanNodeSteps = 33554432.0;
/// Largest coordinate of a scene's bounds, metres.
inline constexpr double kMaxSceneCoordinate = 32768.0;

/// Reads and validates a scene file, resolves and loads its material table (relative
/// paths are tried against the scene's folder and then each parent folder, so the
/// default "sim/data/materials.toml" finds the repository's table). Any problem gives
/// an Error "path:line:column: message". Allocates; thread-safe (no shared state).
Result<Scene> loadScene(const std::string& path);

/// Validates scene text against a given material table (the `materials` key is
/// checked for type but not followed). sourceName prefixes error locations. With a
/// null table material names are not checked (ids stay 0) and the scene cannot be
/// generated. For tests and tools; never crashes on any input. Allocates; thread-safe.
Result<Scene> parseScene(std::string_view text, std::string_view sourceName,
                         std::shared_ptr<const MaterialTable> materials);

/// The identity a client and server compare at join (and saves record): the hashes of
/// the scene's and the material table's parsed documents (Scene::hash, materialsHash)
/// folded, so a comment or layout change is the same scene and any value change is not.
std::uint64_t sceneJoinHash(const Scene& scene) noexcept;

/// World bounds (bricks, whole chunks) for a box in metres: min rounded down, max up.
WorldBounds worldBoundsFromMetres(const Vec3& min, const Vec3& max) noexcept;

}  // namespace loam::sim
