enum _KafkaBuild {}
