"""Privacy models' distances and mechanisms: EMD, the multiplicative distance, noise.

Pure definitions, shared by the methods that build releases, the measures that describe
them and the verifiers that check them.
"""
