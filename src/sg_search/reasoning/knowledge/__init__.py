"""Distilled commonsense knowledge (SCOUT): datasets, SBERT embeddings and the two MLPs.

``KnowledgeModel.load_default()`` gives the shipped models::

    km = KnowledgeModel.load_default()
    km.containment(["kitchen"], ["plate"])        # p(kitchen contains plate)
    km.cooccurrence(["bottom cabinet"], ["plate"])  # p(plate in/on a bottom cabinet)
"""

from sg_search.reasoning.knowledge.model import KnowledgeModel, KnowledgeWeightsError

__all__ = ["KnowledgeModel", "KnowledgeWeightsError"]
