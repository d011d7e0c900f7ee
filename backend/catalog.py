"""The one registry of Method Lab: every ICLR 2026 paper whose abstract is in ``shared/papers``, its section, status and
page. The home page, the router (``app.py``), the CLI and the tests all read it.

Naming rule (README): a method's catalog ``id`` is its CLI group (``python -m backend <id> ...``), its page's url path
(``/<id>``), its page file (``app_pages/<id>.py``), its training name (``python -m backend.train <id>``) and the prefix of its
files in ``assets/``.

This module is pure data: importing it imports neither torch nor streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

SECTIONS: tuple[str, ...] = (
    "Watermarking and provenance",
    "Efficient inference",
    "Representations and compression",
    "Forecasting and simulation",
    "Learning and optimisation",
    "Reasoning",
    "3D and vision",
)


@dataclass(frozen=True)
class Paper:
    """One paper of the catalog.

    ``id``: lowercase slug (see the naming rule). ``abstract``: ``(file name in shared/papers, 1-based index of the
    abstract in that file)``. ``status``: ``"available"`` when ``app_pages/<id>.py`` exists and is wired, else ``"planned"``.
    ``package``: the method's package (``backend.<family>.<id>``, CONTRIBUTING.md "The method package"); its
    ``cli``, ``jobs`` and ``inputs`` modules are found from it, so a packaged row names no ``cli``.
    ``cli``: dotted module exposing ``add_parser(subparsers)`` for ``python -m backend <id>``, or None; derived from
    ``package`` when that is set.
    """

    id: str
    title: str
    summary: str
    section: str
    abstract: tuple[str, int]
    status: str = "planned"
    icon: str = ":material/article:"
    cli: str | None = None
    short: str = ""
    package: str | None = None

    def __post_init__(self) -> None:
        if self.package and not self.cli:
            object.__setattr__(self, "cli", f"{self.package}.cli")

    @property
    def label(self) -> str:
        """Short name for the navigation menu."""
        return self.short or self.title.split(":")[0]

    @property
    def page(self) -> str | None:
        return f"app_pages/{self.id}.py" if self.status == "available" else None

    @property
    def url_path(self) -> str:
        return self.id


@dataclass(frozen=True)
class ToolPage:
    """A page that is not a paper (the catalog itself, the embedded models)."""

    id: str
    title: str
    icon: str
    section: str = "Lab"
    cli: str | None = None

    @property
    def page(self) -> str:
        return f"app_pages/{self.id}.py"


TOOLS: tuple[ToolPage, ...] = (
    ToolPage("home", "Catalog", ":material/home:"),
    ToolPage("models", "Embedded models", ":material/memory:", cli="backend.models.cli"),
    ToolPage("claims", "Claims scoreboard", ":material/leaderboard:"),
)

# Ordered by section (SECTIONS order), then title.
_F0 = "000_689fe722882ea9b9.txt"
_F4 = "004_24ec1f0d1160c33e.txt"

PAPERS: tuple[Paper, ...] = (
    # --- Watermarking and provenance ---
    Paper(
        id="sigmark",
        title="SIGMark: Scalable In-Generation Watermark with Blind Extraction for Video Diffusion",
        summary="Hides a blind, key-free watermark in the initial noise of video diffusion, robust to frame edits in causal 3D VAEs.",
        section="Watermarking and provenance",
        abstract=(_F4, 1),
        icon=":material/videocam:",
        status="available",
        package="backend.watermark.sigmark",
    ),
    Paper(
        id="rewatermark",
        short="Self-re-watermarking",
        title="The Self-Re-Watermarking Trap: From Exploit to Resilience",
        summary="Shows that re-running a watermark encoder erases the first mark, and trains a Lipschitz-bounded encoder that resists it.",
        section="Watermarking and provenance",
        abstract=(_F0, 17),
        icon=":material/copyright:",
        status="available",
        package="backend.watermark.rewatermark",
    ),
    Paper(
        id="attribution",
        short="Watermark attribution",
        title="Watermark-based Attribution of AI-Generated Content",
        summary="Gives every user their own watermark, picked to maximise provable bounds, and traces content to the best-matching user.",
        section="Watermarking and provenance",
        abstract=(_F0, 10),
        icon=":material/person_search:",
        status="available",
        package="backend.watermark.attribution",
    ),
    Paper(
        id="bait",
        title="When Priors Backfire: On the Vulnerability of Unlearnable Examples to Pretraining",
        summary="Bi-level perturbations that tie protected images to wrong labels, so data stays unlearnable even for pretrained models.",
        section="Watermarking and provenance",
        abstract=(_F0, 18),
        icon=":material/shield:",
        status="available",
        package="backend.robustness.bait",
    ),
    # --- Efficient inference ---
    Paper(
        id="illava",
        short="iLLaVA token merging",
        title="An Image is Worth Fewer Than 1/3 Input Tokens in Large Multimodal Models",
        summary="Merges redundant image tokens inside both the vision encoder and the LLM, folding dropped content into kept tokens.",
        section="Efficient inference",
        abstract=(_F0, 13),
        icon=":material/merge:",
        status="available",
        package="backend.tokens.illava",
    ),
    Paper(
        id="d2f",
        short="D2F",
        title="Diffusion LLMs Can Do Faster-Than-AR Inference via Discrete Diffusion Forcing",
        summary="Turns a diffusion LM into a block-wise hybrid with KV caching that decodes several blocks in parallel, beating AR speed.",
        section="Efficient inference",
        abstract=(_F4, 19),
        icon=":material/bolt:",
        status="available",
        package="backend.reasoning.d2f",
    ),
    Paper(
        id="futurefill",
        title="FutureFill: Fast Generation from Convolutional Sequence Models",
        summary="Exact decoding for long-convolution models in quasilinear time by pre-filling future outputs with FFTs into a small cache.",
        section="Efficient inference",
        abstract=(_F0, 1),
        icon=":material/fast_forward:",
        status="available",
        package="backend.generation.futurefill",
    ),
    Paper(
        id="tactic",
        title="Tactic: Adaptive Sparse Attention with Clustering and Distribution Fitting for Long-Context LLMs",
        summary="Loads just enough KV tokens per head to reach a target share of attention mass, estimated via key clusters and a fitted curve.",
        section="Efficient inference",
        abstract=(_F4, 2),
        icon=":material/filter_alt:",
        status="available",
        package="backend.tokens.tactic",
    ),
    # --- Representations and compression ---
    Paper(
        id="pruning",
        short="RCPU pruning",
        title="Rotation-Constrained Error Compensation for Structured Pruning of LLMs",
        summary="Repairs structured-pruning error with a rotation of the kept weights and a variance-aware choice of inputs to keep.",
        section="Representations and compression",
        abstract=(_F4, 17),
        icon=":material/content_cut:",
        status="available",
        package="backend.compression.pruning",
    ),
    Paper(
        id="stamp",
        title="STaMP: Sequence Transformation and Mixed Precision for Low-Precision Activation Quantization",
        summary="Applies an orthogonal transform along the token axis and keeps the few high-energy coefficients at 8 bits, the rest at 4.",
        section="Representations and compression",
        abstract=(_F0, 15),
        icon=":material/equalizer:",
        status="available",
        package="backend.compression.stamp",
    ),
    Paper(
        id="slowness",
        short="Temporal slowness",
        title="Temporal Slowness in Central Vision Drives Semantic Object Learning",
        summary="Self-supervised learning on gaze-centred crops of egocentric video, pulling together frames that are close in time.",
        section="Representations and compression",
        abstract=(_F4, 9),
        icon=":material/visibility:",
        status="available",
        package="backend.scenes.slowness",
    ),
    Paper(
        id="glot",
        short="GLOT pooling",
        title="Towards Improved Sentence Representations using Token Graphs",
        summary="Pools a frozen LM's token states by building a similarity graph, refining it with a small GNN, then an attention readout.",
        section="Representations and compression",
        abstract=(_F0, 16),
        icon=":material/hub:",
        status="available",
        package="backend.tokens.glot",
    ),
    # --- Forecasting and simulation ---
    Paper(
        id="pbfm",
        short="PBFM",
        title="Physics vs Distributions: Pareto Optimal Flow Matching with Physics Constraints",
        summary="Trains flow matching with a PDE-residual loss via conflict-free gradients and unrolling, keeping samples physical and diverse.",
        section="Forecasting and simulation",
        abstract=(_F4, 15),
        icon=":material/science:",
        status="available",
        package="backend.physics.pbfm",
    ),
    Paper(
        id="nowcast",
        short="RainPro-8 nowcast",
        title="RainPro-8: An Efficient Deep Learning Model to Estimate Rainfall Probabilities over 8 Hours",
        summary="Fuses radar, satellite and NWP in one compact network that outputs rain-exceedance probability maps for up to 8 hours.",
        section="Forecasting and simulation",
        abstract=(_F4, 7),
        icon=":material/water_drop:",
        status="available",
        package="backend.forecast.nowcast",
    ),
    Paper(
        id="crowd",
        short="STDDN crowds",
        title="STDDN: A Physics-Guided Deep Learning Framework for Crowd Simulation",
        summary="Trains a pedestrian simulator so the crowd density obeys a continuity equation solved by a neural ODE on a grid graph.",
        section="Forecasting and simulation",
        abstract=(_F0, 6),
        icon=":material/groups:",
        status="available",
        package="backend.forecast.crowd",
    ),
    Paper(
        id="deltaadapter",
        short="Delta-Adapter",
        title="The Forecast After the Forecast: A Post-Processing Shift in Time Series",
        summary="Boosts a frozen forecaster with tiny bounded modules that nudge its inputs and correct its outputs, plus calibrated intervals.",
        section="Forecasting and simulation",
        abstract=(_F0, 9),
        icon=":material/tune:",
        status="available",
        package="backend.forecast.deltaadapter",
    ),
    Paper(
        id="nextmotion",
        short="What happens next",
        title="What Happens Next? Anticipating Future Motion by Generating Point Trajectories",
        summary="Generates diverse dense point-trajectory grids from one still image with a video-style generator that outputs motion, not pixels.",
        section="Forecasting and simulation",
        abstract=(_F0, 7),
        icon=":material/moving:",
        status="available",
        package="backend.forecast.nextmotion",
    ),
    # --- Learning and optimisation ---
    Paper(
        id="dada",
        title="DADA: Dual Averaging with Distance Adaptation",
        summary="Parameter-free dual averaging whose step weights adapt to the distance travelled from the start, for many convex classes.",
        section="Learning and optimisation",
        abstract=(_F0, 2),
        icon=":material/trending_down:",
        status="available",
        package="backend.optim.dada",
    ),
    Paper(
        id="dmnl",
        short="DMNL bandits",
        title="Diversified Multinomial Logit Contextual Bandits",
        summary="A UCB bandit that picks product assortments item by item when set diversity raises the chance that a user buys.",
        section="Learning and optimisation",
        abstract=(_F0, 11),
        icon=":material/shopping_cart:",
        status="available",
        package="backend.bandits.dmnl",
    ),
    Paper(
        id="dualrs",
        short="Dual randomized smoothing",
        title="Dual Randomized Smoothing: Beyond Global Noise Variance",
        summary="Certifies robustness with a per-input noise level chosen by a second smoothed model, winning at both small and large radii.",
        section="Learning and optimisation",
        abstract=(_F0, 8),
        icon=":material/verified_user:",
        status="available",
        package="backend.robustness.dualrs",
    ),
    Paper(
        id="moh",
        short="MoH heuristics",
        title="Generalizable Heuristic Generation Through LLMs with Meta-Optimization",
        summary="An LLM-refined meta-optimizer writes the optimizers that evolve heuristics for routing and packing across many problem sizes.",
        section="Learning and optimisation",
        abstract=(_F4, 4),
        icon=":material/route:",
        status="available",
        package="backend.heuristics.moh",
    ),
    Paper(
        id="spectralbellman",
        short="Spectral Bellman",
        title="Spectral Bellman Method: Unifying Representation and Exploration in RL",
        summary="Learns Q-features whose covariance matches Bellman backups of random value functions, then reuses it for exploration.",
        section="Learning and optimisation",
        abstract=(_F4, 5),
        icon=":material/explore:",
        status="available",
        package="backend.rl.spectralbellman",
    ),
    Paper(
        id="depo",
        short="DEPO",
        title="Towards High Data Efficiency in Reinforcement Learning with Verifiable Reward",
        summary="Cuts RLVR cost by choosing a diverse, useful training subset offline and skipping low-explorability prompts during rollouts.",
        section="Learning and optimisation",
        abstract=(_F0, 19),
        icon=":material/filter_list:",
        status="available",
        package="backend.reasoning.depo",
    ),
    Paper(
        id="vintix",
        title="Vintix II: Decision Pre-Trained Transformer is a Scalable In-Context Reinforcement Learner",
        summary="Scales an in-context RL transformer with a flow-matching action head across hundreds of tasks to adapt to unseen ones.",
        section="Learning and optimisation",
        abstract=(_F4, 18),
        icon=":material/smart_toy:",
        status="available",
        package="backend.icrl.vintix",
    ),
    # --- Reasoning ---
    Paper(
        id="softbon",
        short="Soft Best-of-N",
        title="Best-of-N through the Smoothing Lens: KL Divergence and Regret Analysis",
        summary="Analyses a softened Best-of-N that samples candidates by exp(beta x reward), showing when it beats hard BoN on weak proxies.",
        section="Reasoning",
        abstract=(_F4, 10),
        icon=":material/leaderboard:",
        status="available",
        package="backend.alignment.softbon",
    ),
    Paper(
        id="catalystbench",
        short="CatalystBench",
        title="CatalystBench: A Comprehensive Multi-Task Benchmark for Advancing Language Models in Catalysis Science",
        summary="A catalysis benchmark spanning extraction, regression and reasoning tasks, plus multi-head multi-task fine-tuning of an LLM.",
        section="Reasoning",
        abstract=(_F4, 11),
        icon=":material/experiment:",
        status="available",
        package="backend.data.catalystbench",
    ),
    Paper(
        id="bridge",
        short="Bridge",
        title="Generalized Parallel Scaling with Interdependent Generations",
        summary="Lets parallel samples of one prompt share hidden-state information through small cross-sample attention blocks.",
        section="Reasoning",
        abstract=(_F0, 14),
        icon=":material/device_hub:",
        status="available",
        package="backend.reasoning.bridge",
    ),
    Paper(
        id="mathmo",
        title="MATHMO: Automated Mathematical Modeling Through Adaptive Search",
        summary="LLM-driven two-level search over modelling frameworks and models that returns a Pareto set across competing objectives.",
        section="Reasoning",
        abstract=(_F0, 5),
        icon=":material/functions:",
        status="available",
        package="backend.search.mathmo",
    ),
    Paper(
        id="orprm",
        title="OR-PRM: A Process Reward Model for Algorithmic Problem in Operations Research",
        summary="Cleans operations-research data, builds step-labelled solutions by tree search and trains a step-level reward model on them.",
        section="Reasoning",
        abstract=(_F4, 6),
        icon=":material/rule:",
        status="available",
        package="backend.reasoning.orprm",
    ),
    Paper(
        id="swireasoning",
        title="SwiReasoning: Switch-Thinking in Latent and Explicit for Pareto-Superior Reasoning LLMs",
        summary="Training-free decoding that alternates latent soft-embedding steps with explicit tokens by entropy trend, with a switch cap.",
        section="Reasoning",
        abstract=(_F0, 4),
        icon=":material/swap_horiz:",
        status="available",
        package="backend.reasoning.swireasoning",
    ),
    Paper(
        id="t1",
        title="T1: Tool-integrated Verification for Test-time Compute Scaling in Small Language Models",
        summary="Lets a small LM verify candidates by first vetoing arithmetic or fact errors with tools, then ranking survivors with a reward model.",
        section="Reasoning",
        abstract=(_F4, 12),
        icon=":material/build:",
        status="available",
        package="backend.reasoning.t1",
    ),
    Paper(
        id="rgm",
        short="Reflective GM",
        title="Test-Time Scaling with Reflective Generative Model",
        summary="Shares one backbone between policy and a small step-scoring head trained from final-answer rewards, to pick the best trace.",
        section="Reasoning",
        abstract=(_F4, 8),
        icon=":material/psychology:",
        status="available",
        package="backend.reasoning.rgm",
    ),
    # --- 3D and vision ---
    Paper(
        id="aml",
        short="AML referring segmentation",
        title="AMLRIS: Alignment-aware Masked Learning for Referring Image Segmentation",
        summary="Masks image regions poorly matched to the referring phrase during training, so segmentation learns from reliable pixels.",
        section="3D and vision",
        abstract=(_F4, 14),
        icon=":material/center_focus_strong:",
        status="available",
        package="backend.scenes.aml",
    ),
    Paper(
        id="mcd",
        short="MCD biology diffusion",
        title="Controllable Diffusion-Based Generation for Multi-Channel Biological Data",
        summary="One diffusion model that imputes any missing channels of spatial biology images from any observed subset of channels.",
        section="3D and vision",
        abstract=(_F4, 16),
        icon=":material/biotech:",
        status="available",
        package="backend.imputation.mcd",
    ),
    Paper(
        id="iggt",
        title="IGGT: Instance-Grounded Geometry Transformer for Semantic 3D Reconstruction",
        summary="One multi-view transformer predicting cameras, depth, points and 3D-consistent instance features for plug-in VLM queries.",
        section="3D and vision",
        abstract=(_F0, 12),
        icon=":material/view_in_ar:",
        status="available",
        package="backend.scenes.iggt",
    ),
    Paper(
        id="lyra",
        title="Lyra: Generative 3D Scene Reconstruction via Video Diffusion Model Self-Distillation",
        summary="Distils a camera-controlled video diffusion model into a 3D Gaussian-splatting decoder, with no real multi-view data.",
        section="3D and vision",
        abstract=(_F4, 3),
        icon=":material/landscape:",
        status="available",
        package="backend.scenes.lyra",
    ),
    Paper(
        id="laionaudit",
        short="LAION audit",
        title="Person-Centric Annotations of LAION-400M: Auditing Bias and Its Transfer to Models",
        summary="Labels every person in LAION-400M to audit demographic bias and relate it to the bias of CLIP and Stable Diffusion.",
        section="3D and vision",
        abstract=(_F0, 3),
        icon=":material/balance:",
        status="available",
        package="backend.data.laionaudit",
    ),
    Paper(
        id="jigsaw",
        short="Visual Jigsaw",
        title="Visual Jigsaw Post-Training Improves MLLMs",
        summary="RL post-training where a multimodal LLM reorders shuffled image patches, video clips or 3D points, scored automatically.",
        section="3D and vision",
        abstract=(_F4, 13),
        icon=":material/extension:",
        status="available",
        package="backend.scenes.jigsaw",
    ),
)


def available() -> list[Paper]:
    return [p for p in PAPERS if p.status == "available"]


def by_section() -> dict[str, list[Paper]]:
    out: dict[str, list[Paper]] = {s: [] for s in SECTIONS}
    for p in PAPERS:
        out[p.section].append(p)
    return out


def get(id_: str) -> Paper | ToolPage:
    for entry in (*TOOLS, *PAPERS):
        if entry.id == id_:
            return entry
    valid = ", ".join(e.id for e in (*TOOLS, *PAPERS))
    raise KeyError(f"Unknown id {id_!r}; valid ids: {valid}")


def packaged() -> list[Paper]:
    """Papers whose method lives in one package of the shared layout (CONTRIBUTING.md "The method package")."""
    return [p for p in PAPERS if p.package]


def cli_modules() -> dict[str, str]:
    """``{id: dotted module}`` for every entry with a CLI group."""
    return {e.id: e.cli for e in (*TOOLS, *PAPERS) if e.cli}
