// Training anchors (accuracy and batch-size effects against published results).
