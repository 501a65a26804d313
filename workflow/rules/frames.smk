# Stage: frames. Filled in by its owner.


def get_frame_outputs():
    return []
