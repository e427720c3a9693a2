print("ksm")
