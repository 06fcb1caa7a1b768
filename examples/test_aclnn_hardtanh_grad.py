"""ops-nn's aclnnHardtanhBackward C sample (test_aclnn_hardtanh_grad.cpp), translated line by
line to opsnn's Python runtime.

Run: python examples/test_aclnn_hardtanh_grad.py
Prints result[0..7] = 0, 0, 0, 3, 0, 5, 0, 0: only self == 2 lies strictly inside (1.2, 2.4).
"""

import sys

import numpy as np

import opsnn.acl as acl
from opsnn import aclnn


def check_ret(what, ret):
    # CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("... failed. ERROR: %d\n", ret); return ret)
    if ret != acl.ACL_SUCCESS:
        print(f"{what} failed. ERROR: {int(ret)}\n{acl.get_recent_err_msg()}")
        sys.exit(1)


def get_shape_size(shape):
    return int(np.prod(shape, dtype=np.int64))


def init(device_id):
    # (fixed pattern) resource initialisation
    check_ret("aclInit", acl.init())
    check_ret("aclrtSetDevice", acl.rt.set_device(device_id))
    stream, ret = acl.rt.create_stream()
    check_ret("aclrtCreateStream", ret)
    return stream


def create_acl_tensor(host_data, shape, data_type):
    host = np.asarray(host_data, dtype=np.float32)
    size = get_shape_size(shape) * host.itemsize
    # aclrtMalloc device memory, then aclrtMemcpy host -> device
    device_addr, ret = acl.rt.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    check_ret("aclrtMalloc", ret)
    check_ret("aclrtMemcpy", acl.rt.memcpy(device_addr, size, host, size, acl.ACL_MEMCPY_HOST_TO_DEVICE))
    # strides of a contiguous tensor
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    tensor = acl.create_tensor(shape, data_type, strides, 0, acl.ACL_FORMAT_ND, shape, device_addr)
    return device_addr, tensor


def main():
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
    clip_value_min_value = np.float32(1.2)
    clip_value_max_value = np.float32(2.4)
    grad_output_device_addr, grad_output = create_acl_tensor(grad_output_host_data, grad_output_shape, acl.ACL_FLOAT)
    self_device_addr, self_ = create_acl_tensor(self_host_data, self_shape, acl.ACL_FLOAT)
    clip_value_min = acl.create_scalar(clip_value_min_value, acl.ACL_FLOAT)
    if clip_value_min is None:
        check_ret("aclCreateScalar", acl.ACLNN_ERR_PARAM_NULLPTR)
    clip_value_max = acl.create_scalar(clip_value_max_value, acl.ACL_FLOAT)
    if clip_value_max is None:
        check_ret("aclCreateScalar", acl.ACLNN_ERR_PARAM_NULLPTR)
    out_device_addr, out = create_acl_tensor(out_host_data, out_shape, acl.ACL_FLOAT)

    # 3. call the aclnn API: first phase
    workspace_size, executor, ret = aclnn.aclnnHardtanhBackwardGetWorkspaceSize(
        grad_output, self_, clip_value_min, clip_value_max, out)
    check_ret("aclnnHardtanhBackwardGetWorkspaceSize", ret)
    # allocate the workspace the first phase asked for
    workspace_addr = None
    if workspace_size > 0:
        workspace_addr, ret = acl.rt.malloc(workspace_size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("allocate workspace", ret)
    # second phase
    check_ret("aclnnHardtanhBackward", aclnn.aclnnHardtanhBackward(workspace_addr, workspace_size, executor, stream))

    # 4. (fixed pattern) wait for the stream
    check_ret("aclrtSynchronizeStream", acl.rt.synchronize_stream(stream))

    # 5. copy the result device -> host and print it
    size = get_shape_size(out_shape)
    result_data = np.zeros(size, dtype=np.float32)
    check_ret("copy result from device to host",
              acl.rt.memcpy(result_data, result_data.nbytes, out_device_addr, size * 4,
                            acl.ACL_MEMCPY_DEVICE_TO_HOST))
    for i in range(size):
        print(f"result[{i}] is: {result_data[i]:f}")

    # 6. release aclTensor and aclScalar
    acl.destroy_tensor(grad_output)
    acl.destroy_tensor(self_)
    acl.destroy_scalar(clip_value_min)
    acl.destroy_scalar(clip_value_max)
    acl.destroy_tensor(out)

    # 7. release device resources
    acl.rt.free(grad_output_device_addr)
    acl.rt.free(self_device_addr)
    acl.rt.free(out_device_addr)
    if workspace_size > 0:
        acl.rt.free(workspace_addr)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(device_id)
    acl.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
