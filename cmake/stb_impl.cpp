// The stb implementations, compiled once for the whole build (loam_stb): PNG writing
// (loam-tool images, the renderer's screenshots) and PNG reading (tests). Everyone
// else includes the headers for declarations only. stb is third-party C: its
// warnings are not ours (this file is built without the project's -Werror flags).
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb/stb_image.h>
