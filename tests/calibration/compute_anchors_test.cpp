// Compute anchors (GPU catalog against published throughput).
