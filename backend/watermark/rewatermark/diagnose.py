"""Why an SRW-family model misreads its own clean message on a photograph: the candidate causes, measured per image.

For each image and model, over ``seeds`` random messages (clean bit accuracy, no attack):

- ``full``: the any-size path (:meth:`~.lipschitz.SRWModel.embed`, 8-bit rounding, :meth:`decode_logits`) with
  the shipped :data:`~.lipschitz.TILES` x :data:`~.lipschitz.TILES` frames per image;
- ``one_frame``: the same with the whole image as one 32 x 32 frame (``tiles=1``); the columns below measure
  this single frame;
- ``frame``: embedded and decoded at the single 32 x 32 frame itself (no upsampling, no rounding): the model's
  own limit on this frame's content;
- ``round_trip_gain``: the share of the frame residual that comes back at the frame after upsampling to the image
  size and resizing back (projection gain, :func:`~.lipschitz.round_trip`);
- ``frame_detail``: RMS of the frame minus its Gaussian blur (sigma 1 px), the fine detail at the frame that the
  decoder has to read through; ``tile_detail``: the same, averaged over the frames of the tiled path (each covers
  1 / TILES of the image per side, so it holds less detail);
- ``frame_plus_2db`` / ``frame_plus_4db``: the frame path with the residual 2 / 4 dB stronger (the residual cap);
- ``frame_no_clamp``: the frame path without clipping to the pixel range (saturated pixels);
- ``jpeg50_history`` / ``grey``: the one-frame path on the image re-encoded as JPEG-50 / turned grey (JPEG and colour
  history);
- ``frame_contrast_half``: the frame path with the frame's contrast halved about its mean.

    python -m backend.watermark.rewatermark.diagnose [--models srw,plain] [--split dev]

Images come from :mod:`backend.watermark.photos` (default: the development split, the only one used for diagnosis).
"""

from __future__ import annotations

import argparse
import io

import numpy as np


def _jpeg(img: np.ndarray, quality: int) -> np.ndarray:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "JPEG", quality=quality)
    with Image.open(buf) as im:
        return np.asarray(im.convert("RGB"), np.uint8).copy()


def _grey(img: np.ndarray) -> np.ndarray:
    from PIL import Image

    g = np.asarray(Image.fromarray(img).convert("L"), np.uint8)
    return np.repeat(g[..., None], 3, axis=2)


def diagnose(model: str, images: dict[str, np.ndarray], seeds: int = 8) -> list[dict]:
    """One row per image (see the module docstring), for the SRW-family ``model``."""
    import torch

    from backend.watermark.learned import to_tensor
    from backend.watermark.rewatermark import core as R
    from backend.watermark.rewatermark import lipschitz as L

    be = R.get_model(model)
    one = R.get_model(model, tiles=1)
    net = be.model
    s = net.cfg.size
    msgs = [np.random.default_rng(k).integers(0, 2, net.cfg.n_bits).astype(np.uint8) for k in range(seeds)]

    def full(img: np.ndarray, backend=be) -> float:
        return float(np.mean([(backend.decode_batch([backend.embed(img, a)])[0][0] == a).mean() for a in msgs]))

    def frame(x: torch.Tensor, gain: float = 1.0, clamp: bool = True) -> float:
        acc = []
        for a in msgs:
            b = torch.from_numpy(a.astype(np.float32))[None]
            with torch.no_grad():
                xw = x + net.encoder(x, b) * gain
                logits = net.decoder(xw.clamp(-1, 1) if clamp else xw)[0].numpy()
            acc.append(float(((logits > 0) == a).mean()))
        return float(np.mean(acc))

    rows = []
    for name, img in images.items():
        big = to_tensor(img)
        x = L.resize(big, (s, s)) * 2 - 1
        with torch.no_grad():
            gains = []
            for a in msgs[:4]:
                r = net.encoder(x, torch.from_numpy(a.astype(np.float32))[None])
                back = L.round_trip(r, tuple(big.shape[-2:]))
                gains.append(float((back * r).sum() / (r * r).sum()))
            detail = float((x - L._blur(x, 1.0)).pow(2).mean().sqrt())
            g = L.TILES
            xt = L.to_tiles(L.resize(big, (g * s, g * s)) * 2 - 1, g, s)
            tile_detail = float((xt - L._blur(xt, 1.0)).pow(2).mean(dim=(1, 2, 3)).sqrt().mean())
        mean = x.mean()
        rows.append({"model": model, "image": name, "size": f"{img.shape[1]}x{img.shape[0]}", "full": full(img),
                     "one_frame": full(img, one), "frame": frame(x), "round_trip_gain": float(np.mean(gains)), "frame_detail": detail,
                     "tile_detail": tile_detail,
                     "frame_plus_2db": frame(x, 10 ** (2 / 20)), "frame_plus_4db": frame(x, 10 ** (4 / 20)),
                     "frame_no_clamp": frame(x, clamp=False), "jpeg50_history": full(_jpeg(img, 50), one),
                     "grey": full(_grey(img), one), "frame_contrast_half": frame((x - mean) * 0.5 + mean)})
    return rows


def main(argv: list[str] | None = None) -> int:
    from backend.watermark import photos as P

    ap = argparse.ArgumentParser(prog="python -m backend.watermark.rewatermark.diagnose",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="srw,plain")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--seeds", type=int, default=8)
    args = ap.parse_args(argv)
    images = P.load_split(args.split)
    for m in [m.strip() for m in args.models.split(",")]:
        rows = diagnose(m, images, args.seeds)
        keys = [k for k in rows[0] if k not in ("model", "image", "size")]
        print(f"{m}: {'image':22s} {'size':>9s} " + " ".join(f"{k[:14]:>14s}" for k in keys))
        for r in rows:
            print(f"{m}: {r['image']:22s} {r['size']:>9s} " + " ".join(f"{r[k]:14.3f}" for k in keys))
        print(f"{m}: {'mean':22s} {'':>9s} " + " ".join(f"{np.mean([r[k] for r in rows]):14.3f}" for k in keys))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
