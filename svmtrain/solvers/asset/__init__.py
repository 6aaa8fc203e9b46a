"""ASSET: linear SVMs on approximate feature maps (Nystrom, random Fourier), in memory and streamed."""
