"""Crowd simulation: STDDN (Liu et al., "STDDN: A Physics-Guided Deep Learning Framework for Crowd Simulation",
ICLR 2026, arXiv 2604.02756) against social force, ORCA, constant velocity and STDDN's no-density ablation.

Modules (read in this order):

* ``scenes``    scene geometries (corridor, bottleneck, crossing, GC-like concourse) and the held-out split;
* ``physics``   the vectorised social-force model (torch) and ORCA (pyrvo / RVO2);
* ``generate``  the ground-truth generator (hidden per-agent parameters, noise, social force mixed with ORCA);
* ``data``      the :class:`Clip` trajectory container (0.08 s frames);
* ``density``   differentiable density mapping, cross-grid detection, hard binning, an upwind reference solver;
* ``stddn``     the trajectory network, the density ODE (DVCG) and the staged loss;
* ``training``  windows, batches and the staged training schedule;
* ``rollout``   the long-term simulation protocol shared by all methods;
* ``methods``   the registry ``get_method(name)`` and the shipped weights;
* ``metrics``   MAE, Sinkhorn OT, MMD, FDE, collisions;
* ``evaluate``  run methods on clips and score them;
* ``csvio``     ``frame, id, x, y`` CSV input/output;
* ``cli``       ``python -m backend crowd ...``.

Importing this package imports nothing heavy; import the submodules you need.
"""
