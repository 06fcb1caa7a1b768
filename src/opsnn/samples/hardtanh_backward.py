"""ops-nn's aclnnHardtanhBackward sample (examples/test_aclnn_hardtanh_grad.cpp), line by line.

Run: ``python examples/test_aclnn_hardtanh_grad.py`` or ``opsnn demo``.
Prints result[0..7] = 0, 0, 0, 3, 0, 5, 0, 0: only self == 2 lies strictly inside (1.2, 2.4).
"""

import numpy as np

import opsnn.acl as acl
from opsnn import aclnn
from opsnn.samples.common import check_ret, create_acl_tensor, finalize, init, print_result, run_as_script


def main(emit=print) -> int:
    # 1. (fixed pattern) device/stream initialisation
    device_id = 0
    stream = init(device_id)

    # 2. build inputs and outputs
    grad_output_shape = [4, 2]
    self_shape = [4, 2]
    out_shape = [4, 2]
    grad_output_host_data = [0, 1, 2, 3, 4, 5, 6, 7]
    self_host_data = [1, 1, 1, 2, 1, 2, 3, 3]
    out_host_data = [0, 0, 0, 0, 0, 0, 0, 0]
    clip_value_min_value = np.float32(1.2)  # float clipValueMinValue = 1.2f;
    clip_value_max_value = np.float32(2.4)
    grad_output_device_addr, grad_output = create_acl_tensor(grad_output_host_data, grad_output_shape,
                                                             acl.ACL_FLOAT)
    self_device_addr, self_ = create_acl_tensor(self_host_data, self_shape, acl.ACL_FLOAT)
    clip_value_min = acl.create_scalar(clip_value_min_value, acl.ACL_FLOAT)
    check_ret("aclCreateScalar", 0 if clip_value_min is not None else acl.ACLNN_ERR_PARAM_NULLPTR)
    clip_value_max = acl.create_scalar(clip_value_max_value, acl.ACL_FLOAT)
    check_ret("aclCreateScalar", 0 if clip_value_max is not None else acl.ACLNN_ERR_PARAM_NULLPTR)
    out_device_addr, out = create_acl_tensor(out_host_data, out_shape, acl.ACL_FLOAT)

    # 3. call the aclnn API: the first phase plans and returns the workspace size
    workspace_size, executor, ret = aclnn.aclnnHardtanhBackwardGetWorkspaceSize(
        grad_output, self_, clip_value_min, clip_value_max, out)
    check_ret("aclnnHardtanhBackwardGetWorkspaceSize", ret)
    workspace_addr = None
    if workspace_size > 0:
        workspace_addr, ret = acl.rt.malloc(workspace_size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("allocate workspace", ret)
    # the second phase queues the computation on the stream
    ret = aclnn.aclnnHardtanhBackward(workspace_addr, workspace_size, executor, stream)
    check_ret("aclnnHardtanhBackward", ret)

    # 4. (fixed pattern) wait for the stream
    check_ret("aclrtSynchronizeStream", acl.rt.synchronize_stream(stream))

    # 5. copy the result back to the host and print it
    print_result(out_device_addr, out_shape, acl.ACL_FLOAT, emit)

    # 6. release aclTensor and aclScalar
    acl.destroy_tensor(grad_output)
    acl.destroy_tensor(self_)
    acl.destroy_scalar(clip_value_min)
    acl.destroy_scalar(clip_value_max)
    acl.destroy_tensor(out)

    # 7. release device resources
    addrs = [grad_output_device_addr, self_device_addr, out_device_addr]
    finalize(device_id, stream, addrs + ([workspace_addr] if workspace_size > 0 else []))
    return 0


if __name__ == "__main__":
    run_as_script(main, "opsnn.samples.hardtanh_backward")
