"""The ops-nn C samples for the aclnn operators, translated line by line to opsnn's runtime.

``examples/test_aclnn_*.py`` link here; ``opsnn demo`` runs them. The helpers the C samples
repeat in every file (CHECK_RET, Init, CreateAclTensor, GetShapeSize) live once in ``common``.
"""
