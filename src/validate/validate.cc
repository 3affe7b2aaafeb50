// validate: see include/gpuplan/validate.h
