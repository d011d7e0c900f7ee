"""Procedural scenes and their augmentations, shared by the vision, dense-prediction and 3-D pages (a shared package,
not a method: it imports no method package).

A scene is a stack of flat layers seen by a camera: a backdrop (plain, gradient, grating or fractal, with pale
clutter) far behind, and objects in front of it, each a shape (the object class) with a colour, a texture, a size, a
pose (centre and in-plane rotation), a depth and an opacity. The renderer paints them far to near and returns, beside
the image, the per-pixel instance ids and depth of the visible surface, so every image comes with exact labels for
detection, segmentation, depth and tracking. A clip moves the objects (velocity, spin, growth), pans the camera
(objects shift by ``-offset / depth``: parallax) and drifts the light. The same seed and config give the same arrays
(numpy random streams keyed by the seed); rendering is numpy only, and an object costs time in proportion to its
area. The iLLaVA scenes (:mod:`backend.tokens.illava.scenes`) render through this package (their images are pinned
bit for bit by sha256 in ``tests/backend/test_scenes.py``).

Public API (imported lazily: ``import backend.scenes`` loads neither torch nor kornia)

| name | what | shapes |
|---|---|---|
| ``SceneConfig`` | what may appear: size, object count, classes, colours, textures, radius, depth, rotation, backgrounds, clutter, lighting, translucency, overlap | |
| ``make_scene(seed, config)`` | one rendered scene | ``Frame`` |
| ``make_scenes(seeds, config)``, ``stack(frames)`` | many scenes; stacked arrays | images uint8 ``[B, H, W, 3]``, instances int32 ``[B, H, W]``, depth float32 ``[B, H, W]`` |
| ``Frame`` | ``image`` uint8 ``[H, W, 3]``, ``instances`` int32 ``[H, W]`` (0 background, ``k`` = ``objects[k-1]``), ``depth`` float32 ``[H, W]``, ``classes`` int32 ``[H, W]`` (shape index + 1), ``objects``, ``camera`` | |
| ``Motion``, ``make_clip(seed, config, motion)`` | a moving scene: object velocity, spin and growth, camera pan, shake or a given path, light drift | ``Clip``: ``images`` ``[T, H, W, 3]``, ``instances`` / ``depth`` ``[T, H, W]``, ``centres`` ``[T, N, 2]``, ``visible`` ``[T, N]``, ``camera`` ``[T, 2]``, ``velocity`` ``[N, 2]`` |
| ``sample_layout(seed, config, margin)``, ``Layout`` | the scene before rendering (backdrop, objects, lighting); ``layout.render(camera)`` | |
| ``draw(backdrop, objects, camera, lighting)`` | the renderer, for hand-made scenes | ``Frame`` |
| ``Instance``, ``Backdrop``, ``Lighting`` | one object; the background layer; a light change | |
| ``object_mask(instance, h, w)``, ``patch_coverage(masks, patch)`` | an object's whole (amodal) mask; its share of each patch | bool ``[H, W]``; float ``[cells]`` |
| ``PALETTE``, ``SHAPES``, ``TEXTURES``, ``BACKGROUNDS`` | the tables a config chooses from (10 colours, 10 classes, 5 textures, 4 backgrounds) | |
| ``instance_colors(instances)``, ``depth_image(depth)``, ``contact_sheet(frames)`` | pictures of the label maps, for display; images, instance maps and depth of several frames in three rows | uint8 ``[H, W, 3]``; uint8 ``[3 H + 4, n W + 2 (n - 1), 3]`` |
| ``EgoConfig``, ``make_ego_clip(seed, config)``, ``make_stream(seeds, config)``, ``make_photo(seed, config, instance, background)``, ``BACKGROUND_CLASSES`` | an egocentric stream (a held object that turns and scales under changing light while fixations and pans move the cluttered backdrop of one of 8 background classes; categories co-occur with backgrounds) and object-centred photos whose foreground or background can be swapped | ``EgoClip``: ``images`` ``[T, H, W, 3]``, ``instances`` ``[T, H, W]`` (1 = the held object); ``Photo``: ``image`` ``[H, W, 3]``, ``mask`` ``[H, W]`` |
| ``Primitive``, ``Scene3D``, ``random_scene(seed)``, ``Camera``, ``orbit(n, radius, elevation_deg, width, height)``, ``render(scene, camera)``, ``RenderResult`` | solid 3-D scenes (boxes, spheres, cylinders on a ground plane), pinhole cameras (OpenCV axes) and an analytic ray-cast renderer (:mod:`backend.scenes.scene3d`) | ``rgb`` float32 ``[H, W, 3]``, ``depth`` float32 ``[H, W]`` (``inf`` on the sky), ``instance`` int32 ``[H, W]`` |
| ``Gaussians``, ``render_gaussians(means, scales, quats, opacities, colors, K, viewmat, width, height)``, ``camera_tensors(camera)``, ``quat_to_rotmat(q)``, ``SplatRender`` | differentiable 3-D Gaussian splatting in torch (EWA projection, depth-sorted front-to-back alpha compositing, tiles; :mod:`backend.scenes.splat`) | Gaussians ``[(B,) N, ...]``; ``rgb [(B,) H, W, 3]``, ``depth`` / ``alpha [(B,) H, W]`` |
| ``AugmentConfig``, ``augment_batch(images, instances, depth, config, seed)``, ``augmenter(config, (H, W))`` (the kornia module), ``to_tensors(frames)`` | kornia augmentations (random resized crop, colour jitter, blur, flips) applied to the image and, with the same geometry and nearest sampling, to its label maps | images float ``[B, 3, h, w]`` in [0, 1], instances int64 ``[B, h, w]``, depth float32 ``[B, h, w]`` |

Example::

    from backend.scenes import AugmentConfig, Motion, SceneConfig, augment_batch, make_clip, make_scenes, to_tensors
    cfg = SceneConfig(size=128, objects=(2, 4))
    images, instances, depth = to_tensors(make_scenes(range(32), cfg))     # [32, 3, 128, 128], [32, 128, 128] x 2
    batch = augment_batch(images, instances, depth, AugmentConfig(size=96), seed=step)
    clip = make_clip(7, cfg, Motion(frames=16, camera_speed=3.0))         # clip.images [16, 128, 128, 3]

Modules: ``objects`` (palette, shapes, textures, ``Instance``, masks and painting), ``render`` (backgrounds,
``Lighting``, ``Frame``, the renderer, views), ``clips`` (configs, random layouts, scenes and clips), ``ego`` (the
egocentric stream and object photos, drawn by the same renderer), ``augment`` (kornia, imported only there),
``scene3d`` (solid 3-D scenes, pinhole cameras and the analytic ray-cast renderer).
Method packages: ``slowness`` (temporal slowness in central vision, :mod:`backend.scenes.slowness`) and ``aml``
(alignment-aware masked learning for referring segmentation, :mod:`backend.scenes.aml`), which this package does not
import. Speed: ``benchmarks/scenes.py`` (frames per second at 64 to 224 pixels).
``iggt`` (instance-grounded multi-view features, :mod:`backend.scenes.iggt`) is a method package on ``scene3d``.
``jigsaw`` (Visual Jigsaw: GRPO on jigsaw puzzles of scenes and photographs, :mod:`backend.scenes.jigsaw`) is a
method package on ``clips``.
``lyra`` (feed-forward 3-D Gaussians distilled from a view generator, :mod:`backend.scenes.lyra`) is a method package
on ``scene3d`` and ``splat``.

Invariants (``tests/backend/test_scenes.py``): same seed and config, same arrays; every pixel of an opaque object
differs from the background behind it (palette colours have a channel <= 60, backgrounds keep every channel >= 150);
ids are unique and each visible id is its object's; the visible surface is the nearest (depth map = the minimum
depth of the objects covering a pixel); a whole-pixel camera move shifts an object at depth 1 by exactly that many
pixels and the backdrop by the move over its depth; augmentations move label maps with their images.

The path to 3-D. Depth is already a distance along the optical axis (in units of the reference plane, depth 1) and
the camera already projects with parallax (screen shift = camera offset / depth), so the 2-D scenes are the special
case of a pinhole camera translating parallel to the image plane and looking at fronto-parallel planar objects
(billboards) in front of a backdrop plane. A 3-D renderer adds on top of this package: a camera with intrinsics
``K [3, 3]`` and a pose ``[R | t]`` per frame (``Motion.camera_path`` becomes a pose path), objects that carry a
mesh (vertices ``[V, 3]``, faces ``[F, 3]``) and a 3-D pose instead of a shape mask and an angle, and a z-buffer in
place of the far-to-near painting. It returns the same ``Frame`` (image, instance ids, per-pixel depth), so pages,
label maps, clips and the augmentations stay as they are; ``Instance.depth`` becomes the mesh's per-pixel depth.
Left out: forward camera motion and roll (they need that projection), soft edges and shadows.
"""

from backend.api import lazy_api

__getattr__, __dir__, __all__ = lazy_api(__name__, {
    "PALETTE": "objects", "SHAPES": "objects", "TEXTURES": "objects", "Instance": "objects",
    "object_mask": "objects",
    "BACKGROUNDS": "render", "Backdrop": "render", "Lighting": "render", "Frame": "render", "draw": "render",
    "patch_coverage": "render", "instance_colors": "render", "depth_image": "render",
    "contact_sheet": "render",
    "SceneConfig": "clips", "Layout": "clips", "sample_layout": "clips", "make_scene": "clips",
    "make_scenes": "clips", "stack": "clips", "Motion": "clips", "Clip": "clips", "make_clip": "clips",
    "EgoConfig": "ego", "EgoClip": "ego", "make_ego_clip": "ego", "make_stream": "ego", "Photo": "ego",
    "make_photo": "ego", "BACKGROUND_CLASSES": "ego",
    "AugmentConfig": "augment", "augment_batch": "augment", "augmenter": "augment", "to_tensors": "augment",
    "Primitive": "scene3d", "Scene3D": "scene3d", "random_scene": "scene3d", "Camera": "scene3d",
    "orbit": "scene3d", "render": "scene3d", "RenderResult": "scene3d",
    "Gaussians": "splat", "render_gaussians": "splat", "camera_tensors": "splat", "quat_to_rotmat": "splat",
    "SplatRender": "splat",
})
