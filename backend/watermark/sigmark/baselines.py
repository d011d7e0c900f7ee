"""The non-blind baselines SIGMark is compared with: VideoShield-style per-video templates and VideoMark-style one-key
PRC with a store of messages matched by edit distance.
"""

from __future__ import annotations

import time

import numpy as np

from backend.watermark import prc
from backend.watermark.sigmark.channel import Channel
from backend.watermark.sigmark.gfprc import frame_blocks, prc_signed_noise


# ---------------------------------------------------------------------------------------- non-blind baseline
class VideoShieldStore:
    """VideoShield-style non-blind in-generation watermark (Gaussian Shading per video).

    Each registered video stores (message, per-video key). Its template for latent frame f is the message repeated
    to n bits, XOR a per-(video, frame) keystream (ChaCha20 in the original; numpy's Philox here, since no ChaCha20
    library is installed), so the template is uniform and z = (1 - 2 template) |N| stays Gaussian. Extraction
    compares the inverted sign bits of every latent frame with every stored video's template in every frame slot:
    O(N Lf^2 n) bit comparisons; the best video and slot give the key; decrypt and vote."""

    def __init__(self, channel: Channel, m: int = 32, seed: int = 7):
        c, lat, h, w = channel.latent_shape
        self.n, self.lf, self.m, self.shape = c * h * w, lat - 1, m, channel.latent_shape
        self.rng = np.random.default_rng(seed)
        self.messages: list[np.ndarray] = []
        self.vkeys: list[int] = []
        self.packed = np.zeros((0, self.lf, self.n // 8), np.uint8)

    def _stream(self, vkey: int) -> np.ndarray:
        return np.random.Generator(np.random.Philox(key=vkey)).integers(0, 2, (self.lf, self.n), dtype=np.uint8)

    def _spread(self, msg: np.ndarray) -> np.ndarray:
        return np.repeat(np.asarray(msg, np.uint8), self.n // self.m)[None].repeat(self.lf, axis=0)  # [Lf, n]

    def register(self, message: np.ndarray) -> int:
        vkey = int(self.rng.integers(0, 2**63))
        tmpl = self._spread(message) ^ self._stream(vkey)
        self.messages.append(np.asarray(message, np.uint8))
        self.vkeys.append(vkey)
        self.packed = np.concatenate([self.packed, np.packbits(tmpl, axis=1)[None]])
        return len(self.messages) - 1

    def register_random(self, count: int) -> None:
        """Add ``count`` decoy records (other users' videos) in one vectorised step."""
        msgs = self.rng.integers(0, 2, (count, self.m), dtype=np.uint8)
        vkeys = self.rng.integers(0, 2**63, count)
        packed = np.empty((count, self.lf, self.n // 8), np.uint8)
        for i in range(count):
            packed[i] = np.packbits(self._spread(msgs[i]) ^ self._stream(int(vkeys[i])), axis=1)
        self.messages.extend(list(msgs))
        self.vkeys.extend(int(v) for v in vkeys)
        self.packed = np.concatenate([self.packed, packed])

    def initial_noise(self, index: int, seed: int) -> np.ndarray:
        base = np.random.default_rng([seed, 0]).standard_normal(self.shape).astype(np.float32)
        tmpl = np.unpackbits(self.packed[index], axis=1)[:, : self.n]
        z = base.copy()
        c, _, h, w = self.shape
        for f in range(1, self.lf + 1):
            z[:, f] = (1 - 2 * tmpl[f - 1].astype(np.float32)).reshape(c, h, w) * np.abs(base[:, f])
        return z

    def extract_noise(self, z_hat: np.ndarray) -> dict:
        """Template matching against all N records: returns {index, message, frame_bits, slot, seconds}."""
        t0 = time.perf_counter()
        lat = z_hat.shape[1]
        bits = np.stack([(z_hat[:, f].reshape(-1) < 0).astype(np.uint8) for f in range(1, lat)])  # [L', n]
        pb = np.packbits(bits, axis=1)  # [L', n/8]
        lut = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(1).astype(np.uint16)
        # agreements [N, L', Lf]
        agree = np.empty((len(self.packed), len(pb), self.lf), np.int32)
        for i in range(len(pb)):
            agree[:, i, :] = self.n - lut[np.bitwise_xor(self.packed, pb[i][None, None])].sum(axis=2)
        best_slot = agree.argmax(axis=2)  # [N, L']
        video_score = agree.max(axis=2).sum(axis=1)
        v = int(video_score.argmax())
        stream = self._stream(self.vkeys[v])
        frame_bits = np.full((self.lf, self.m), np.nan)
        votes = []
        for i in range(len(pb)):
            s = best_slot[v, i]
            plain = bits[i] ^ stream[s]
            fb = (plain.reshape(self.m, -1).mean(axis=1) > 0.5).astype(float)
            frame_bits[s] = fb
            votes.append(plain.reshape(self.m, -1))
        msg = (np.concatenate(votes, axis=1).mean(axis=1) > 0.5).astype(np.uint8)
        return {"index": v, "message": msg, "frame_bits": frame_bits, "slot": best_slot[v] + 1,
                "seconds": time.perf_counter() - t0, "comparisons": int(len(self.packed) * len(pb) * self.lf * self.n)}


def levenshtein_many(query: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Levenshtein (edit) distance of the bit string ``query`` [m], m <= 64, to every row of ``stored`` [K, m'].

    Myers' bit-vector algorithm (J. ACM 1999) in Hyyroe's form for the global distance: one column of the dynamic
    programme per text symbol, the m vertical deltas packed in one 64-bit word, vectorised over the K stored strings
    (the python-Levenshtein package VideoMark calls uses the same algorithm for short strings; it is not installed
    here). Returns int64 [K]. O(K m') word operations, i.e. K edit distances."""
    q = np.asarray(query, np.uint8).reshape(-1)
    t = np.atleast_2d(np.asarray(stored, np.uint8))
    m = q.size
    if not 1 <= m <= 64:
        raise ValueError(f"query length must be 1..64 bits; got {m}")
    one = np.uint64(1)
    mask = np.uint64((1 << m) - 1)
    high = np.uint64(1 << (m - 1))
    weights = (one << np.arange(m, dtype=np.uint64))
    peq = {c: np.uint64(int(weights[q == c].sum())) for c in (0, 1)}  # query positions holding symbol c
    K = t.shape[0]
    vp = np.full(K, mask, np.uint64)  # vertical +1 deltas (column 0 of the DP is 0, 1, ..., m)
    vn = np.zeros(K, np.uint64)
    score = np.full(K, m, np.int64)
    for j in range(t.shape[1]):
        eq = np.where(t[:, j] == 1, peq[1], peq[0])
        xv = eq | vn
        xh = ((((eq & vp) + vp) & mask) ^ vp) | eq
        ph = vn | (~(xh | vp) & mask)
        mh = vp & xh
        score += (ph & high) != 0
        score -= (mh & high) != 0
        ph = ((ph << one) | one) & mask  # global distance: row 0 of the DP rises by 1 per text symbol
        mh = (mh << one) & mask
        vp = mh | (~(xv | ph) & mask)
        vn = ph & xv
    return score


class VideoMarkStore:
    """VideoMark-style non-blind in-generation watermark (Hu et al., arXiv 2504.16359), as SIGMark's authors
    re-implemented it for their comparison (``watermarks/videomark.py`` of SIGMark-release).

    ONE PRC key for all videos and all latent frames (default FPR 0.01 of that code: 7 test bits; PRC's noise rate).
    Each registered video's message blocks (the same ``frame_blocks`` layout as SIGMark: 32 bits tiled over all latent
    frames, or a different 32-bit block per latent frame) join a store of N x blocks messages;
    ``z_T[:, f] = PRC_Encode(K, block of f) * |N(0, I)|``, latent frame 0 plain. Extraction: PRC Detect of each
    inverted latent frame with the one key; the detected ones are BP-decoded, the others count as 0.5; majority vote
    over the copies of a block (ties -> 1, as upstream); then every voted block is replaced by the NEAREST stored
    message by Levenshtein distance among all N x blocks stored messages: O(N L) edit distances per latent frame in
    the 32-bit-per-frame layout, growing with every registered video. There is no temporal index (one key), so the
    block of an inverted latent frame is its position, and there is no SGO (the phase search needs frame-wise keys).
    Not modelled: the original VideoMark's shift of a shared 500 x 512-bit message sequence and its temporal matching
    module (SIGMark's re-implementation drops them too)."""

    def __init__(self, channel: Channel, m: int = 32, key_fpr: float = 0.01, bp_iters: int | None = 200,
                 seed: int = 11, video_fpr: float = 1e-6):
        c, lat, h, w = channel.latent_shape
        self.n, self.lf, self.m, self.shape = c * h * w, lat - 1, m, channel.latent_shape
        self.video_fpr = video_fpr
        self.rng = np.random.default_rng(seed)
        self.key = prc.keygen(self.n, m, key_fpr, bp_iters=bp_iters, seed=np.random.default_rng([seed, 99]))
        self.stored = np.zeros((0, m), np.uint8)  # [N x blocks, m]
        self.owner = np.zeros((0, 2), np.int64)  # (video index, block index) of each stored message
        self.n_videos = 0

    def _add(self, msgs: np.ndarray, count: int) -> int:
        """Append ``count`` videos whose ``msgs [count x blocks, m]`` are stored video after video; returns the first
        new video index."""
        first, blocks = self.n_videos, len(msgs) // count
        vid = first + np.repeat(np.arange(count), blocks)
        self.stored = np.concatenate([self.stored, msgs])
        self.owner = np.concatenate([self.owner, np.stack([vid, np.tile(np.arange(blocks), count)], 1)])
        self.n_videos += count
        return first

    def register(self, message: np.ndarray) -> int:
        """Store the message's distinct blocks (``len(message) / m`` of them); returns the video index."""
        msg = np.asarray(message, np.uint8).reshape(-1)
        frame_blocks(msg, self.lf, self.m)  # validates the length
        return self._add(msg.reshape(-1, self.m), 1)

    def register_random(self, count: int, blocks: int = 1) -> None:
        """Add ``count`` decoy videos (other users' records) of ``blocks`` random blocks each."""
        self._add(self.rng.integers(0, 2, (count * blocks, self.m), dtype=np.uint8), count)

    def message_of(self, index: int) -> np.ndarray:
        rows = self.owner[:, 0] == index
        return self.stored[rows][np.argsort(self.owner[rows, 1])].reshape(-1)

    def initial_noise(self, index: int, seed: int) -> np.ndarray:
        """z_T of registered video ``index`` from ``seed`` (same |N| magnitudes as SIGMark's for that seed)."""
        per_frame = frame_blocks(self.message_of(index), self.lf, self.m)
        return prc_signed_noise(self.shape, seed, [self.key] * self.lf, per_frame, stream=2)

    def extract_noise(self, z_hat: np.ndarray, message_bits: int, posterior_variance: float = 1.5) -> dict:
        """Decode every inverted latent frame with the one key, vote, match each block to the nearest stored message.

        Returns {message, frame_bits [Lf, m] (the matched block at each latent position), index (the video owning
        most matched blocks), owners, detected (some latent frame passes Detect at video_fpr / Lf: union bound),
        decoded [Lf', m] (before matching), edit_distances, seconds}."""
        t0 = time.perf_counter()
        lat = z_hat.shape[1] - 1
        blocks = message_bits // self.m
        fr = self.lf // blocks
        decoded = np.full((lat, self.m), 0.5)
        detected = False
        for i in range(lat):
            post = prc.posterior(z_hat[:, i + 1].reshape(-1), posterior_variance)
            score, const, base = prc.detect_terms(self.key, post)
            if score >= prc.threshold(const, base, self.video_fpr / max(1, lat)):
                detected = True
            if score >= prc.threshold(const, base, self.key.fpr):
                res = prc.decode(self.key, post)
                if res.message is not None:
                    decoded[i] = res.message
        message = np.zeros(message_bits, np.uint8)
        owners = []
        n_dist = 0
        for b in range(blocks):
            rows = decoded[b * fr:(b + 1) * fr]
            voted = (rows.mean(axis=0) >= 0.5).astype(np.uint8) if len(rows) else np.ones(self.m, np.uint8)
            d = levenshtein_many(voted, self.stored)
            n_dist += len(d)
            j = int(d.argmin())
            message[b * self.m:(b + 1) * self.m] = self.stored[j]
            owners.append(self.owner[j].tolist())
        frame_bits = frame_blocks(message, self.lf, self.m).astype(float)
        vids = [o[0] for o in owners]
        return {"message": message, "frame_bits": frame_bits, "decoded": decoded, "owners": owners,
                "index": int(max(set(vids), key=vids.count)), "detected": detected, "edit_distances": n_dist,
                "seconds": time.perf_counter() - t0}


